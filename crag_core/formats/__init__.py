"""Text out of the files and web pages people keep: ``extract`` (files) and ``fetch_url``."""
