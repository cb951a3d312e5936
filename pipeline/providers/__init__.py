"""Search and extract providers: the ports (``base``), one module per vendor, selection per
capability (``registry``), failover chains (``chain``), the shared vendor HTTP client
(``http``), checks on vendor data (``common``) and in-memory fakes (``fake``).

Nothing is imported here so that ``import pipeline`` stays light.
"""
