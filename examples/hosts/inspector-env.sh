npx @modelcontextprotocol/inspector -e BRAVE_API_KEY="$BRAVE_API_KEY" -- rypsok serve
