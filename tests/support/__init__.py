"""Stand-ins shared by tests/, bench/, tools/soak/ and fuzz/: fake engines, local HTTPS
sites under a test CA, provider stand-ins behind a proxy, MCP lines, the repository's paths."""
