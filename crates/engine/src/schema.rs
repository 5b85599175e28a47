//! OpenAPI / JSON Schema descriptions of the types with hand-written serde
//! forms (feature `schema`).

use std::borrow::Cow;

use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{RefOr, schema::OneOfBuilder};
use utoipa::{PartialSchema, ToSchema};

use crate::card::{Card, CardSet};
use crate::hand::Trick;
use crate::seat::Seat;

impl PartialSchema for Card {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^([2-9TJQKA]|10)[CDHS]$"))
            .description(Some(
                "A card: rank (2-9, T, J, Q, K, A) then suit (C, D, H, S), e.g. \"AS\", \"TD\". \
                 The server writes upper case and T; it also reads lower case and 10.",
            ))
            .examples(["AS", "TD", "2C"])
            .into()
    }
}

impl ToSchema for Card {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Card")
    }
}

impl PartialSchema for CardSet {
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(Card::schema())
            .unique_items(true)
            .max_items(Some(52))
            .description(Some("A set of cards, sorted by suit (clubs, diamonds, hearts, spades) then rank."))
            .into()
    }
}

impl ToSchema for CardSet {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("CardSet")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((<Card as ToSchema>::name().into_owned(), Card::schema()));
    }
}

impl PartialSchema for Trick {
    fn schema() -> RefOr<Schema> {
        let seat_ref = || RefOr::Ref(utoipa::openapi::Ref::from_schema_name(<Seat as ToSchema>::name()));
        ObjectBuilder::new()
            .description(Some("The cards played to one trick, in play order from its leader."))
            .property("leader", seat_ref())
            .required("leader")
            .property(
                "cards",
                ArrayBuilder::new()
                    .items(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(<Card as ToSchema>::name())))
                    .max_items(Some(4)),
            )
            .required("cards")
            .property(
                "winner",
                OneOfBuilder::new()
                    .item(seat_ref())
                    .item(ObjectBuilder::new().schema_type(Type::Null))
                    .description(Some("Who took the trick, once all four cards are down.")),
            )
            .required("winner")
            .into()
    }
}

impl ToSchema for Trick {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Trick")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((<Card as ToSchema>::name().into_owned(), Card::schema()));
        schemas.push((<Seat as ToSchema>::name().into_owned(), Seat::schema()));
    }
}
