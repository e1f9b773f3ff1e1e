"""One fake secret of each kind the secret check knows, built here with the real shape of its
provider's format (prefix, alphabet and length), with the text around it in a query."""

from __future__ import annotations


def fake(n: int, seed: str = "FakeExample0Token") -> str:
    """n characters of an obviously fake body (letters of both cases and a digit)."""
    return (seed * (n // len(seed) + 1))[:n]


# kind -> (text before the secret, the secret, text after it). The secret of
# a name=value form is the value; the name stays in the text.
EXAMPLES: dict[str, tuple[str, str, str]] = {
    "pem_private_key": (
        "",
        "-----BEGIN RSA PRIVATE KEY-----\n" + fake(64) + "\n" + fake(40) + "==\n"
        "-----END RSA PRIVATE KEY-----",
        "",
    ),
    "url_userinfo_password": ("https://alice:", "s3cret", "@db.example/status"),
    "aws_access_key_id": ("", "AKIAIOSFODNN7EXAMPLE", ""),
    "aws_secret_access_key": (
        "aws_secret_access_key=",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "",
    ),
    "github_token": ("", "ghp_" + fake(36), ""),
    "gitlab_token": ("", "glpat-" + fake(20), ""),
    "npm_token": ("", "npm_" + fake(36), ""),
    "hugging_face_token": ("", "hf_" + fake(34, "FakeExampleToken"), ""),
    "slack_token": ("", "xoxb-1234567890123-1234567890123-" + fake(24), ""),
    "slack_webhook": ("https://hooks.slack.com/services/", "T00000000/B00000000/" + fake(24), ""),
    "stripe_key": ("", "sk_live_" + fake(24), ""),
    "google_api_key": ("", "AIza" + fake(35), ""),
    "google_client_secret": ("", "GOCSPX-" + fake(28), ""),
    "anthropic_key": ("", "sk-ant-api03-" + fake(93) + "AA", ""),
    "openai_key": ("", "sk-proj-" + fake(40) + "T3BlbkFJ" + fake(40), ""),
    "sendgrid_key": ("", "SG." + fake(22) + "." + fake(43), ""),
    "telegram_bot_token": ("", "123456789:AA" + fake(33), ""),
    "twilio_key": ("", "SK" + "0123456789abcdef" * 2, ""),
    "azure_account_key": ("DefaultEndpointsProtocol=https;AccountKey=", fake(86) + "==", ";"),
    "azure_shared_access_key": ("Endpoint=sb://bus.example/;SharedAccessKey=", fake(43) + "=", ""),
    "json_web_token": (
        "",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiw"
        "iaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "",
    ),
    "basic_authorization": ("Authorization: Basic ", "dXNlcjpwYXNzd29yZA==", ""),
    "bearer_token": ("Authorization: Bearer ", fake(32), ""),
    "password_assignment": ("password=", "hunter2", ""),
}
