claude mcp add rypsok -- python3 /opt/rypsok/rypsok.pyz serve --config /etc/rypsok/rypsok.toml
