-- Run once by the postgres container on an empty volume (docker-entrypoint-initdb.d), as the POSTGRES_USER.
-- Atlas uses the database `atlas` (POSTGRES_DB); the schema registry keeps its schemas in its own database so
-- that the schema ids written into Kafka messages survive a registry restart.
CREATE DATABASE registry;
