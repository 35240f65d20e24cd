"""Configuration apart from composition: the settings schema (schema.py and its sections), the layers it is read
from (layers.py: base.yaml, --config, a mapping, CLI overrides) and the `${VAR:default}` markers (env_markers.py)."""
