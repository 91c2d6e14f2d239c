from .point_sup_rcnn import PointSupRCNN
