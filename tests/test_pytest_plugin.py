"""The pytest plugin, driven with pytester: one item per claim and point, witnesses on failure."""
import textwrap

SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    good = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [Rational(1, 2), 1]}, claims=[dp.private(eps)])
    bad = dp.spec(rr, name="halved", universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                  grid={eps: [1]}, claims=[dp.private(eps / 2)])
""")


def test_claims_become_items_and_refutations_show_witnesses(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "rr.py").write_text(SPEC)
    result = pytester.runpytest("spec", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*rr::private?eps=1/2? PASSED*",
        "*halved::private?eps=1? FAILED*",
        "*refuted: halved:private*",
        "*P(output|X)  = 0.7310585786300048792511592418218362743651*",
        "*replay: dpverify check spec/rr.py --spec halved --claim private --point eps=1*",
    ])
    assert "Traceback" not in result.stdout.str()


def test_a_broken_spec_file_fails_with_its_location(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "broken.py").write_text("import dpverify as dp\nx = dp.universe([], n=1, neighbours=dp.REPLACE_ONE)\n")
    result = pytester.runpytest("spec")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*spec/broken.py:2: the universe has no records*"])


def test_files_outside_spec_directories_are_collected_only_when_named(pytester) -> None:
    pytester.path.joinpath("rr.py").write_text(SPEC)
    assert pytester.runpytest().ret == 5  # no tests collected from a directory that is not a spec directory
    pytester.runpytest("rr.py").assert_outcomes(passed=2, failed=1)


def test_expected_refutations_pass_and_unexpected_holds_fail(pytester) -> None:
    pytester.mkdir("spec")
    body = SPEC.replace("claims=[dp.private(eps / 2)]", "claims=[dp.private(eps / 2, expect='refuted')]")
    body = body.replace("claims=[dp.private(eps)]", "claims=[dp.private(eps, expect='refuted')]")
    pytester.path.joinpath("spec", "rr.py").write_text(body)
    result = pytester.runpytest("spec")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*expected refuted, got proved*"])


def test_a_density_witness_is_labelled_a_density(pytester) -> None:
    """A released Laplace value's witness holds densities, not probabilities: the failure says so."""
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "lap.py").write_text(textwrap.dedent("""
        from sympy import Rational
        import dpverify as dp
        eps = dp.symbol("eps", positive=True)

        def lap(data, eps):
            return dp.laplace(data[0], 1 / eps)

        halved = dp.spec(lap, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                         grid={eps: [1]}, claims=[dp.private(eps / 2)])
    """))
    result = pytester.runpytest("spec")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*density at the output under X  = *"])
    assert "P(output|X)" not in result.stdout.str()
