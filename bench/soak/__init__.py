"""The soak (its run in __main__.py, `python -m bench.soak`), one job a module.

pages   the pages the local sites serve, ordinary and hostile, and what each is for
sites   the child process that serves them over HTTPS, and the MediaWiki stand-ins
server  the configuration, `check`'s figures, the server process and its resident set
client  raw HTTP/1.1 exchanges with the listener and what an answer says
load    the mixed load: who sends what, when, and the record of every request
report  tallies, percentiles, the verdict, the printed report and its JSON twin
"""
