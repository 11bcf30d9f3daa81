"""Floating-point claims: ``float_private`` (a double-precision sampler of one uniform against the
idealised mechanism: equal supports over the 2^53 uniforms, and the exact epsilon of a finite image).
:mod:`.check` decides; the reachability searches are in :mod:`dpverify.engine.program.floating`."""
