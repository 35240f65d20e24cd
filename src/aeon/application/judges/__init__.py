"""The judges of a pass: evaluation, convergence, grounding, refinement and the adaptive depth."""
