"""Golden sets: natural-language tasks with the tool behaviour a good model shows on them."""
