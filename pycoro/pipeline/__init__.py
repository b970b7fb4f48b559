"""One compilation as a pipeline of products (driver.py: parse → check →
lower → optimise → emit, each computed once), its options (options.py) and
the re-run of a cached program without the compiler (rerun.py). Importing
this package imports nothing heavy: driver.py loads the compiler."""
