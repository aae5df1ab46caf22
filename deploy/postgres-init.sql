-- The API server's threads and runs (CRAG_API_DATABASE_URL), apart from the CLI's checkpoints.
CREATE DATABASE crag_api;
