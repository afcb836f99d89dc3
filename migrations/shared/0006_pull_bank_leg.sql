-- Bank-funded pulls: why a pull failed after authorization (its bank leg's reason).
ALTER TABLE debit_pulls ADD COLUMN failure_reason TEXT;
