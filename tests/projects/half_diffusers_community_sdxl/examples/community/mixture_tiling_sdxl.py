import torch

from diffusers import DiffusionPipeline


class StableDiffusionXLTilingPipeline(DiffusionPipeline):
    def __init__(self, vae, unet, scheduler):
        super().__init__()
        self.register_modules(vae=vae, unet=unet, scheduler=scheduler)

    def upcast_vae(self):
        self.vae.to(dtype=torch.float32)

    @torch.no_grad()
    def __call__(self, latents, timesteps, prompt_embeds, output_type="pil"):
        device, dtype = latents.device, latents.dtype
        for t in timesteps:
            latent_model_input = self.scheduler.scale_model_input(latents, t)
            with torch.amp.autocast(device.type, dtype=dtype, enabled=dtype != self.unet.dtype):
                noise_pred = self.unet(latent_model_input, t, encoder_hidden_states=prompt_embeds,
                                       return_dict=False)[0]
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        if not output_type == "latent":
            # make sure the VAE is in float32 mode, as it overflows in float16
            needs_upcasting = self.vae.dtype == torch.float16 and self.vae.config.force_upcast
            if needs_upcasting:
                self.upcast_vae()
                latents = latents.to(next(iter(self.vae.post_quant_conv.parameters())).dtype)
            image = self.vae.decode(latents / self.vae.config.scaling_factor, return_dict=False)[0]
            # cast back to fp16 if needed
            if needs_upcasting:
                self.vae.to(dtype=torch.float16)
        else:
            image = latents
        return image
