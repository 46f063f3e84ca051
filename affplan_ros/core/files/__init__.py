"""Files: YAML settings, atomic state files with locks, and the original AutoGPT+P scene and scenario files."""
