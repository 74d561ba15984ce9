"""Page ``claims-001``: document 001's claims in one table with filters (:func:`analyses.chapters.ledger.document_page`)."""

from analyses.chapters.ledger import document_chapter

SPEC, Result, compute = document_chapter("001")
