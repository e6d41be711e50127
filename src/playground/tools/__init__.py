"""The load tools' command lines, one module per tool, built in one place each."""
