"""The acme namespace."""
