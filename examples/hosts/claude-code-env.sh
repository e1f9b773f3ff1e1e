claude mcp add --transport stdio -e BRAVE_API_KEY="$BRAVE_API_KEY" rypsok -- rypsok serve
