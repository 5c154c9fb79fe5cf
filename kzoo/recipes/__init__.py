"""Training recipes of the papers kzoo's families come from, as functions
(`kzoo.recipes.ulmfit`)."""
