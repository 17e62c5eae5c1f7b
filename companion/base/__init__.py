"""The foundation every layer uses: errors, time sources, JSON files, JSON Schemas, where the data files
are, modules imported on first use. It imports nothing else of the package."""
