"""Double of vllm.exceptions (0.30.0): since 0.27 (vLLM PR #49665) a request vLLM
refuses raises VLLMValidationError, a VLLMClientError, and no longer a ValueError.
Proves well-formed calls only."""


class VLLMError(Exception):
    pass


class VLLMClientError(VLLMError):
    """An error the request caused (vLLM's server answers it 4xx)."""


class VLLMValidationError(VLLMClientError):
    def __init__(self, message: str, *, parameter: str | None = None, value=None):
        super().__init__(message)
        self.parameter, self.value = parameter, value
