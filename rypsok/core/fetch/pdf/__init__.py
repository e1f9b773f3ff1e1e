"""web_fetch's PDF reader (issue 33): PDFium reads the text layer in a worker process
(worker.py, started by reader.py), layout.py turns the text's positions into Markdown.
"""
