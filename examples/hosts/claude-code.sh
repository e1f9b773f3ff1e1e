claude mcp add rypsok -- rypsok serve --config /etc/rypsok/rypsok.toml
