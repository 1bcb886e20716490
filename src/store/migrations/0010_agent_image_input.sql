-- Whether the agent's model accepts image input: images a tool returned are then shown to it.
-- Off by default: a model that does not take images refuses a request that carries one.
alter table agents add column model_image_input boolean not null default false;
