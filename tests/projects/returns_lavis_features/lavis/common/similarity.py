import torch


def project_queries(queries, projection):
    """The queries in the retrieval space, computed in half precision."""
    with torch.autocast("cuda", dtype=torch.float16):
        return queries @ projection
