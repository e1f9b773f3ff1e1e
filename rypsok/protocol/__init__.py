"""The MCP adapters: the only package that imports the MCP SDK."""
