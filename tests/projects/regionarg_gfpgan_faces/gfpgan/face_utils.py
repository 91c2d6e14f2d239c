import torch


def select_faces(cropped_faces, min_size=32):
    """Indices of the faces large enough to restore; the others are pasted back as they are."""
    return [i for i, face in enumerate(cropped_faces) if min(face.shape[-2:]) >= min_size]


def scatter_restored_faces(restored, keep_idx, num_faces, size=512):
    """One slot per detected face; the skipped slots stay zero."""
    out = torch.zeros(num_faces, 3, size, size, device=restored.device)
    out[keep_idx] = restored
    return out
