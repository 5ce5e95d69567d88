"""statsmodels, tracked by its shipped mapping file alone: a formula OLS, an ARIMA and a
regularized fit, each with the arguments that define the model as params, its scalar
results, its coefficient table and summary, and its results saved in MLflow's
statsmodels flavour. The script runs in its own interpreter; the store is read back
through MlflowClient."""

from __future__ import annotations

import csv
import io
import json
import textwrap

import mlflow
import mlflow.statsmodels
import numpy as np
import pytest
from conftest import only_run, run_script, store_of
from mlflow.tracking import MlflowClient

SCRIPT = textwrap.dedent("""
    from pypads import PyPads
    PyPads()
    import json
    import statsmodels.api as sm
    import statsmodels.formula.api as smf
    from statsmodels.tsa.arima.model import ARIMA
    longley = sm.datasets.longley.load_pandas().data
    ols = smf.ols("TOTEMP ~ GNP + POP", data=longley).fit(cov_type="HC1")
    sunspots = sm.datasets.sunspots.load_pandas().data["SUNACTIVITY"].values
    arima = ARIMA(sunspots, order=(2, 0, 1), trend="c").fit()
    lasso = sm.OLS(longley["TOTEMP"], sm.add_constant(longley[["GNP", "POP"]])).fit_regularized(alpha=0.1, L1_wt=1.0)
    json.dump({"ols": {"rsquared": ols.rsquared, "aic": ols.aic, "params": ols.params.tolist(), "bse": ols.bse.tolist()},
               "arima": {"aic": arima.aic, "llf": arima.llf, "forecast": arima.forecast(3).tolist()},
               "lasso": lasso.params.tolist()}, open("facts.json", "w"))
""")


def test_formula_ols_arima_and_a_regularized_fit(tmp_path, monkeypatch):
    result = run_script(SCRIPT, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr, result.stderr
    facts = json.loads((tmp_path / "facts.json").read_text())
    uri = store_of(tmp_path)
    run = only_run(uri)
    params, metrics = run.params, run.metrics
    # What defines each model: the formula and names, ARIMA's order and trend, the fit's arguments.
    assert params["OLS.formula"] == "TOTEMP ~ GNP + POP" and params["OLS.cov_type"] == "HC1"
    assert params["OLS.exog_names"] == "['Intercept', 'GNP', 'POP']" and params["OLS.endog_names"] == "TOTEMP"
    assert params["ARIMA.order"] == "(2, 0, 1)" and params["ARIMA.trend"] == "c"
    assert params["OLS_1.alpha"] == "0.1" and params["OLS_1.L1_wt"] == "1.0"
    assert metrics["OLS.rsquared"] == pytest.approx(facts["ols"]["rsquared"]) and metrics["OLS.aic"] == pytest.approx(facts["ols"]["aic"])
    assert metrics["ARIMA.aic"] == pytest.approx(facts["arima"]["aic"]) and metrics["ARIMA.llf"] == pytest.approx(facts["arima"]["llf"])
    assert "ARIMA.rsquared" not in metrics  # not defined for it: left out
    table = list(csv.DictReader(io.StringIO(run.artifact_text("OLS/coefficients.csv"))))
    assert [row[""] for row in table] == ["Intercept", "GNP", "POP"]
    np.testing.assert_allclose([float(row["coef"]) for row in table], facts["ols"]["params"])
    np.testing.assert_allclose([float(row["std_err"]) for row in table], facts["ols"]["bse"])
    assert {"p_value", "conf_int_0", "conf_int_1"} <= set(table[0])
    assert "OLS Regression Results" in run.artifact_text("OLS/summary.txt")
    # Each fit's results are a model of the run, loadable with MLflow's statsmodels flavour.
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setattr(mlflow.tracking._tracking_service.utils, "_tracking_uri", uri)
    client = MlflowClient(uri)
    models = {model.name: model for model in client.search_logged_models([run.run.info.experiment_id])}
    assert sorted(models) == ["ARIMA", "OLS", "OLS_1"]
    assert models["ARIMA"].params["order"] == "(2, 0, 1)"
    assert {metric.key for metric in models["ARIMA"].metrics} == {"aic", "bic", "llf"}
    loaded = mlflow.statsmodels.load_model(f"models:/{models['ARIMA'].model_id}")
    np.testing.assert_allclose(loaded.forecast(3), facts["arima"]["forecast"])
    np.testing.assert_allclose(mlflow.statsmodels.load_model(f"models:/{models['OLS_1'].model_id}").params, facts["lasso"])
    # Each model's data, read of the model: a formula's frame, exog and endog, or a time series (beside
    # the constant column the trend makes), named as the script names it; the coefficients as a chart too.
    children = {child.info.run_name: child for child in client.search_runs(
        [run.run.info.experiment_id], f"tags.`mlflow.parentRunId` = '{run.run_id}'")}
    assert sorted(children) == ["ARIMA", "OLS", "OLS_1"]
    (ols_data,) = children["OLS"].inputs.dataset_inputs
    assert ols_data.dataset.name == "longley"
    assert {"TOTEMP", "GNP", "POP"} < {column["name"] for column in json.loads(ols_data.dataset.schema)["mlflow_colspec"]}
    (lasso_data,) = children["OLS_1"].inputs.dataset_inputs
    assert [column["name"] for column in json.loads(lasso_data.dataset.schema)["mlflow_colspec"]] == ["const", "GNP", "POP"]
    (arima_data,) = children["ARIMA"].inputs.dataset_inputs
    assert arima_data.dataset.name == "sunspots" and json.loads(arima_data.dataset.profile)["num_rows"] == 309
    assert "coefficients.png" in [item.path for item in client.list_artifacts(children["OLS"].info.run_id)]


def test_what_the_reading_calls_warns_the_script_of_nothing(tmp_path):
    # statsmodels' summary() warns of a normality test on fewer than 8 rows; the script
    # never calls it, so its stderr must stay as it would be untracked.
    result = run_script(textwrap.dedent("""
        from pypads import PyPads
        PyPads()
        import numpy as np
        import statsmodels.api as sm
        x = np.arange(6.0)
        fitted = sm.OLS(2 * x + np.array([0.1, -0.2, 0.05, 0.0, 0.3, -0.1]), sm.add_constant(x)).fit()
        print("fitted", round(fitted.params[1], 1))
    """), tmp_path)
    assert result.returncode == 0 and "fitted 2.0" in result.stdout, result.stderr
    assert "Warning" not in result.stderr, result.stderr
    run = only_run(store_of(tmp_path))
    assert "OLS Regression Results" in run.artifact_text("OLS/summary.txt")

