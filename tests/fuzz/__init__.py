"""A differential fuzzer: seeded random programs run on ember and on PyTorch, compared step by
step (issue 16). ``generator`` writes the programs, ``optable`` lists the ops they draw from,
``runner`` runs and compares them, ``report`` is the command line, ``test_fuzz`` the CI slice.
"""
