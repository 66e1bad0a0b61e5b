// A TypeScript SDK v2 (npm @modelcontextprotocol/server + @modelcontextprotocol/node) server with the SDK's
// default wiring: createMcpHandler (2026-07-28, with its default stateless fallback for 2025-era clients),
// the localhost Host/Origin guards the README puts in front of a plain node:http server, and serveStdio.
// `node server.mjs --http` binds 127.0.0.1 on a free port and prints `listening on <url>` to stderr.
import { createServer } from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

function build() {
    const server = new McpServer({ name: 'ts-sdk-under-test', version: '1.0.0' });
    server.registerTool(
        'add',
        { description: 'Add two integers', inputSchema: z.object({ a: z.number().int(), b: z.number().int() }), annotations: { readOnlyHint: true, openWorldHint: false } },
        async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] })
    );
    server.registerPrompt('greet', { description: 'Greet someone', argsSchema: z.object({ name: z.string() }) }, ({ name }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Hello ${name}` } }]
    }));
    server.registerResource('readme', 'data://readme', { description: 'A short text', mimeType: 'text/plain' }, async uri => ({
        contents: [{ uri: uri.href, text: 'ts sdk under test' }]
    }));
    return server;
}

if (process.argv.includes('--stdio')) {
    serveStdio(build);
} else {
    const handle = toNodeHandler(createMcpHandler(build));
    const validateHost = localhostHostValidation();
    const validateOrigin = localhostOriginValidation();
    const http = createServer(async (req, res) => {
        if (!validateHost(req, res) || !validateOrigin(req, res)) return;
        if (!req.url.startsWith('/mcp')) {
            res.writeHead(404).end();
            return;
        }
        await handle(req, res);
    });
    http.listen(0, '127.0.0.1', () => {
        process.stderr.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
    });
}
