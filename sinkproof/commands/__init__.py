"""CLI subcommands: one module each, discovered by :func:`sinkproof.cli.build_parser`."""
