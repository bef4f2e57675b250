"""The `council` command's exit codes (refused: a configuration or input error)."""

EXIT_OK, EXIT_FAILED, EXIT_REFUSED = 0, 1, 2
