"""Invoice arithmetic: money, invoice lines, tax rates and totals."""
