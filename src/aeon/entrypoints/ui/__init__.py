"""`aeon ui`: a local web view of the recorded runs — their passes, steps, calls and costs — that answers approvals."""
