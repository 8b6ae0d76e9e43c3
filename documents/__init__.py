"""Documents as the engines see them, and what is made from them again.

Decoding an upload into page images (``pages``), reading a PDF page's own
text (``text_layer``), a page's orientation and skew (``geometry``),
grafting a result's words onto the original pages as a searchable PDF
(``searchable_pdf``, with ``pdf_images``, ``invisible_text``, and
``invisible_layer`` to take an earlier one off), and a
result as hOCR and ALTO (``hocr``, ``alto``).  No Celery, no Flask: the
workers read documents and build searchable PDFs with it, the gateway checks
documents (``inspection``) and renders results with it.
"""
