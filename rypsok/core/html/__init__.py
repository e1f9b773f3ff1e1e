"""Reading web pages, shared by the fetch pipeline and the scraping drivers: the charset
(with undeclared legacy encodings), the bounded HTML tree and its tokenizer, and the tag
vocabulary. It imports nothing here, so the vocabulary stays pure data any layer may read
and html5lib loads only with the first page."""
