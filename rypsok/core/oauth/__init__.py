"""rypsok as an OAuth 2.1 resource server of the operator's identity provider.

- keys: a key set read into public keys, and one signature checked
- claims: a compact JWS split, and an access token's claims checked
- provider: the identity provider's metadata, key set and introspection, bounded
- resource: a bearer token to a Grant, a refusal or Unavailable; the resource metadata
"""
