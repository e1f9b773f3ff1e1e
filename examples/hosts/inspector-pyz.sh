npx @modelcontextprotocol/inspector python3 /opt/rypsok/rypsok.pyz serve
