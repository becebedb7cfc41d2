"""Many runs at once: grids and seeds (``grid``) and their trials on Ray Tune."""
