"""Reusable widgets: the parameter panel drawn from ParamSpecs, message dialogs."""
