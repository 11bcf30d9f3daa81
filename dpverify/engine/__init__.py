"""The program interpreter and its readings.  It knows nothing of claims or reports."""
