import torch

from lavis.common.similarity import project_queries
from lavis.models import load_model


def main(device="cuda"):
    model = load_model("blip_feature_extractor", model_type="base", is_eval=True, device=device)
    image = torch.randn(2, 3, 16, 16, device=device)
    text_ids = torch.randint(0, 100, (3, 5), device=device)
    with torch.no_grad():
        image_features = model.extract_image_features(image)
        text_features = model.extract_text_features(text_ids)
    similarity = image_features @ text_features.t()
    return similarity.max()


def rerank(device="cuda"):
    queries = torch.randn(4, 16, device=device)
    projection = torch.randn(16, 16, device=device)
    corpus = torch.randn(10, 16, device=device)
    return torch.mm(project_queries(queries, projection), corpus.t()).topk(3)
