from .dreamfusion import *  # noqa: F401,F403


@threestudio.register("efficient-dreamfusion-system")
class EffDreamFusion(DreamFusion):
    def on_fit_start(self):
        self.sample_fraction = 0.5
