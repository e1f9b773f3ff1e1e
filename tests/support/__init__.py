"""Stand-ins shared by tests/, bench/, tools/ and fuzz/: fake engines, local HTTPS sites
under a test CA, provider stand-ins behind a proxy, MCP lines, the repository's paths; and
every helper more than one test module uses, since no test module imports another
(tests/test_test_layout.py)."""
