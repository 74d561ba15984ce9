"""The site: building the book, the command line, HTML export, offline charts and notebook helpers."""
