"""What is kept between calls and made of kept text: the full-text cache, reading past the
budget (paging) and the compressor stage."""
