"""The Kubernetes manifests in deploy/ run real commands: the shards' Job is an Indexed Job whose pods run
`evalcore run --shard auto/K` with K its completions, and the merge Job merges the folder they write, with options
the commands have."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import yaml

from evalcore.cli import build_parser

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def _documents(name: str) -> dict[str, dict[str, Any]]:
    return {document["kind"]: document for document in yaml.safe_load_all((DEPLOY / name).read_text(encoding="utf-8")) if document}


def _container(job: dict[str, Any]) -> dict[str, Any]:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def test_the_indexed_job_runs_one_shard_per_pod_with_real_options():
    documents = _documents("k8s-indexed-job.yaml")
    job, claim = documents["Job"], documents["PersistentVolumeClaim"]
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"]
    container = _container(job)
    assert "command" not in container  # the image's entry point is the evalcore command
    args = build_parser().parse_args(container["args"])  # fails on an option `run` does not have
    assert args.command == "run" and args.shard == f"auto/{spec['completions']}"
    (mount,) = container["volumeMounts"]
    assert str(args.shard_dir) == mount["mountPath"]
    (volume,) = spec["template"]["spec"]["volumes"]
    assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"] and volume["name"] == mount["name"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never"  # what podFailurePolicy requires
    assert 'ENTRYPOINT ["evalcore"]' in (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert container["image"] == _container(_documents("k8s-merge-job.yaml")["Job"])["image"]


def test_the_merge_job_merges_the_shards_folder_with_real_options():
    shards = _container(_documents("k8s-indexed-job.yaml")["Job"])
    merge = _container(_documents("k8s-merge-job.yaml")["Job"])
    assert merge["command"] == ["sh", "-c"]
    (line,) = merge["args"]
    words = shlex.split(line)
    assert words[0] == "evalcore"
    args = build_parser().parse_args(words[1:])
    assert args.command == "merge" and args.out is not None
    shard_dir = build_parser().parse_args(shards["args"]).shard_dir
    assert [str(path) for path in args.files] == [f"{shard_dir}/*.parquet"]
    assert merge["volumeMounts"] == shards["volumeMounts"]
