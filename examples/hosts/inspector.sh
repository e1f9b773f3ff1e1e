npx @modelcontextprotocol/inspector rypsok serve
