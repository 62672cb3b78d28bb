"""Moving applications from SCRAM users and Kafka ACLs to MSK IAM: ``msk-migrate acls plan``."""
