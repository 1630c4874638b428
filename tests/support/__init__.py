"""Helpers the tests share: folders shaped like real downloads, fakes of remote services."""
